"""FIRE: Functional Interpolation for Relative positional Encoding (Li et al. 2023, arXiv:2310.04418).

axes: H heads, w MLP width, i query, j key, n_q/n_k positions, m offsets.

A learned function of a normalised distance, one output per head, added to the attention logits:

    b_h(i, j) = f_theta(psi(i - j) / (psi(max(i, L)) + eps))_h,     psi(x) = log(|c x| + 1)
    f_theta(x) = W2^T relu(W1 x + b1) + b2          (Linear(1, w) -> ReLU -> Linear(w, H))
    L = |L_multiplier * init_L|  (the threshold),    eps = 1e-6

Below the threshold (every query position i <= L) the normaliser is the constant psi(L), so the bias depends
on |i - j| alone; past it the normaliser grows with i ("progressive interpolation"), and the score depends on
the query's position too.  That is why FIRE's ``offset_only`` is a statement about a length: it holds for
positions 0 .. n-1 exactly when n - 1 <= L.

NOTE: as the authors' reference module (the paper's appendix: ``FIRE(num_heads=12, mlp_width=32, init_c=0.1,
init_L=512., eps=1e-6)``), the distance is i - j (query minus key) under |.|, so the bias is symmetric and
carries no causal mask (the model's mask does that); c and L_multiplier are learned (init 0.1 and 1.0), init_L
is fixed; the two Linear layers start from PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
weights and biases.  An untrained FIRE (the registry's, drawn from ``seed``) is that initialisation; the
Extrapolation lab trains it (``FIRE_TRAINABLE``).
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_int, check_memory, check_positions
from posenc.schemes.kinds import Bias, TrainableBias

EPS = 1e-6  # the reference module's eps, added to the normaliser
MAX_WIDTH = 1024
BLOCK = 1 << 22  # pairs per block when evaluating the MLP (bounds the (pairs, w) hidden layer)


def fire_psi(x, c: float) -> np.ndarray:
    """psi(x) = log(|c x| + 1), elementwise, float64."""
    return np.log1p(np.abs(c * np.asarray(x, dtype=np.float64)))


def fire_inputs(qpos, kpos, *, c: float, threshold: float) -> np.ndarray:
    """The MLP's input for every (query i, key j): psi(i - j) / (psi(max(i, L)) + eps), (n_q, n_k)."""
    qp = check_positions(qpos, name="query positions")
    kp = check_positions(kpos, name="key positions")
    check_memory("FIRE inputs", (qp.size, kp.size))
    norm = fire_psi(np.maximum(qp, abs(threshold)), c) + EPS  # (n_q,)
    return fire_psi(qp[:, None] - kp[None, :], c) / norm[:, None]


def fire_mlp_init(n_heads: int, width: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """PyTorch's default init of Linear(1, w) and Linear(w, H), in the order nn.Sequential builds them:
    W1 (w,), b1 (w,) ~ U(-1, 1); W2 (w, H), b2 (H,) ~ U(-1/sqrt(w), 1/sqrt(w))."""
    H = check_int("n_heads", n_heads, lo=1, hi=4096)
    w = check_int("mlp_width", width, lo=1, hi=MAX_WIDTH)
    b2 = 1.0 / np.sqrt(w)
    return {"w1": rng.uniform(-1.0, 1.0, w), "b1": rng.uniform(-1.0, 1.0, w),
            "w2": rng.uniform(-b2, b2, (w, H)), "b2": rng.uniform(-b2, b2, H)}


def fire_mlp(x: np.ndarray, w1, b1, w2, b2, heads=None) -> np.ndarray:
    """f_theta at every entry of x, for ``heads`` (default all): (len(heads), *x.shape).

    f_theta(x) = sum_k w2[k] relu(w1[k] x + b1[k]) + b2 is piecewise affine in x, with a kink where a hidden unit turns
    on (x = -b1[k] / w1[k]).  Between two kinks the same units are on, so f = A_m x + B_m there: each entry costs one
    search among the w kinks and one multiply-add, whatever the width (a 4096 x 4096 matrix in about a second)."""
    w1, b1 = np.asarray(w1, dtype=np.float64), np.asarray(b1, dtype=np.float64)
    w2 = np.asarray(w2, dtype=np.float64)[:, heads] if heads is not None else np.asarray(w2, dtype=np.float64)  # (w, h)
    b2 = np.asarray(b2, dtype=np.float64)[heads] if heads is not None else np.asarray(b2, dtype=np.float64)  # (h,)
    with np.errstate(divide="ignore", invalid="ignore"):
        kinks = np.unique(-b1[w1 != 0] / w1[w1 != 0])  # (K,) sorted
    probes = np.concatenate([[kinks[0] - 1.0] if kinks.size else [0.0], (kinks[:-1] + kinks[1:]) / 2,
                             [kinks[-1] + 1.0] if kinks.size else []])  # one x inside each of the K + 1 intervals
    on = (np.multiply.outer(probes, w1) + b1) > 0  # (K + 1, w): which units are on in each interval
    A = (on * w1) @ w2  # (K + 1, h): slope of f in each interval
    B = (on * b1) @ w2 + b2  # (K + 1, h): intercept
    flat = x.reshape(-1)
    out = np.empty((w2.shape[1], flat.size))
    for s in range(0, flat.size, BLOCK):
        xb = flat[s : s + BLOCK]
        m = np.searchsorted(kinks, xb)  # interval of each entry (at a kink both sides agree: the unit adds 0)
        out[:, s : s + BLOCK] = A[m].T * xb + B[m].T
    return out.reshape(w2.shape[1], *x.shape)


def _weights(n_heads, *, c, threshold, mlp_width, seed):
    seed = check_int("seed", seed, lo=0, hi=2**32 - 1)
    return fire_mlp_init(n_heads, mlp_width, np.random.default_rng(seed))


def _fire_bias(qpos, kpos, n_heads, *, c, threshold, mlp_width, seed):
    w = _weights(n_heads, c=c, threshold=threshold, mlp_width=mlp_width, seed=seed)
    check_memory("FIRE bias", (n_heads, np.size(qpos), np.size(kpos)))
    return fire_mlp(fire_inputs(qpos, kpos, c=c, threshold=threshold), **w)


def _fire_head_bias(qpos, kpos, n_heads, head, *, c, threshold, mlp_width, seed):
    w = _weights(n_heads, c=c, threshold=threshold, mlp_width=mlp_width, seed=seed)
    return fire_mlp(fire_inputs(qpos, kpos, c=c, threshold=threshold), **w, heads=[head])[0]


def _fire_offset_bias(offsets, n_heads, *, c, threshold, mlp_width, seed):
    """The bias against j - i for query positions at or below the threshold (normaliser psi(L)): (H, m)."""
    off = check_positions(offsets, name="offsets")
    w = _weights(n_heads, c=c, threshold=threshold, mlp_width=mlp_width, seed=seed)
    x = fire_psi(off, c) / (fire_psi(abs(threshold), c) + EPS)
    return fire_mlp(x, **w)


def _fire_parameters(d, n_heads, *, c, threshold, mlp_width, seed):
    return 3 * mlp_width + mlp_width * n_heads + n_heads + 2  # W1, b1, W2, b2, c, L_multiplier


def fire_flat(n: int | None, *, c, threshold, mlp_width, seed) -> bool:
    """The MLP is constant on every input positions 0 .. n-1 give (every hidden unit is off there; None: any n).

    The inputs fill [0, x_max] with x_max = psi(n - 1) / (psi(max(n - 1, L)) + eps) (below 1); W1 and b1 are drawn
    first from ``seed``, so this does not depend on the number of heads."""
    rng = np.random.default_rng(check_int("seed", seed, lo=0, hi=2**32 - 1))
    w1, b1 = rng.uniform(-1.0, 1.0, mlp_width), rng.uniform(-1.0, 1.0, mlp_width)
    x_max = 1.0 if n is None else float(fire_psi(n - 1, c) / (fire_psi(max(n - 1, abs(threshold)), c) + EPS))
    return bool(np.all(np.maximum(b1, w1 * x_max + b1) <= 0.0))


def fire_offset_only(d: int, n: int | None = None, *, threshold, **params) -> bool:
    """Offset-only for positions 0 .. n-1 when every query sits at or below the threshold (n - 1 <= L), or when the
    MLP is flat there (a narrow MLP whose units are all off: a constant bias)."""
    return (n is not None and n - 1 <= abs(threshold)) or fire_flat(n, threshold=threshold, **params)


def fire_isometric(d: int, n: int | None = None, **params) -> bool:
    """psi is a logarithm, so a non-constant f_theta of it is not a translation of positions: isometric only where
    the MLP is flat (fire_flat)."""
    return fire_flat(n, **params)


# ----------------------------------------------------------------------------- trained (the lab)

def _train_init(rng, n_heads, *, c, threshold, mlp_width, seed):
    """The reference initialisation: the MLP as PyTorch's default, c = 0.1 (the ``c`` setting), L_multiplier = 1."""
    return {**fire_mlp_init(n_heads, mlp_width, rng), "c": np.array(float(c)), "L_multiplier": np.array(1.0)}


def _train_parts(w, qpos, kpos, threshold):
    qp, kp = np.asarray(qpos, dtype=np.float64), np.asarray(kpos, dtype=np.float64)
    c, L = float(w["c"]), float(w["L_multiplier"]) * abs(threshold)
    rel = qp[:, None] - kp[None, :]  # (n_q, n_k) i - j
    top = np.log1p(np.abs(c * rel))
    nq = np.maximum(qp, abs(L))  # (n_q,)
    bottom = np.log1p(np.abs(c * nq)) + EPS
    return rel, top, nq, bottom, top / bottom[:, None]


def _train_forward(w, qpos, kpos, *, c, threshold, mlp_width, seed):
    x = _train_parts(w, qpos, kpos, threshold)[-1]
    return fire_mlp(x, w["w1"], w["b1"], w["w2"], w["b2"])


def _train_backward(w, qpos, kpos, grad, *, c, threshold, mlp_width, seed):
    """d loss / d weights from grad = d loss / d bias (H, n_q, n_k); -inf-masked entries carry no gradient."""
    rel, top, nq, bottom, x = _train_parts(w, qpos, kpos, threshold)
    G = np.where(np.isfinite(grad), grad, 0.0).reshape(grad.shape[0], -1)  # (H, P)
    xf = x.reshape(-1)  # (P,)
    pre = np.multiply.outer(w["w1"], xf) + w["b1"][:, None]  # (w, P)
    hid = np.maximum(pre, 0.0)
    out = {"b2": G.sum(axis=1), "w2": hid @ G.T}  # (H,), (w, H)
    dhid = (w["w2"] @ G) * (pre > 0)  # (w, P)
    out["b1"] = dhid.sum(axis=1)
    out["w1"] = dhid @ xf
    dx = (dhid * w["w1"][:, None]).sum(axis=0).reshape(x.shape)  # (n_q, n_k)
    cc = float(w["c"])
    # x = top / bottom; d top/dc = |rel| sign(c) / (1 + |c rel|); d bottom/dc = |nq| sign(c) / (1 + |c nq|)
    dtop = np.abs(rel) * np.sign(cc) / (1.0 + np.abs(cc * rel))
    dbot = np.abs(nq) * np.sign(cc) / (1.0 + np.abs(cc * nq))  # (n_q,)
    dxdc = dtop / bottom[:, None] - top * (dbot / bottom**2)[:, None]
    out["c"] = np.array(np.sum(dx * dxdc))
    # the threshold moves the normaliser only where it wins the max: d|m L0|/dm = sign(m) |L0|
    lm, L0 = float(w["L_multiplier"]), abs(threshold)
    wins = (abs(lm) * L0 > np.asarray(qpos, dtype=np.float64)).astype(np.float64)  # (n_q,)
    dbot_dL = np.abs(cc) / (1.0 + np.abs(cc) * abs(lm) * L0) * wins * np.sign(lm) * L0
    out["L_multiplier"] = np.array(np.sum(dx * (-top / bottom[:, None] ** 2) * dbot_dL[:, None]))
    return out


FIRE_TRAINABLE = TrainableBias(init=_train_init, forward=_train_forward, backward=_train_backward)

FIRE = Bias(bias=_fire_bias, offset_bias=_fire_offset_bias, head_bias=_fire_head_bias, parameters=_fire_parameters,
            offset_only=fire_offset_only, isometric=fire_isometric, centered_scores=True, trainable=FIRE_TRAINABLE)

