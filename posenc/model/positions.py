"""The replaceable position path of the forward: what rotates the queries and keys of every layer.

axes: H heads, n positions, d head_dim, r rotary channels (r <= d), h = r // 2 rotation pairs.

A ``Rotation`` is built once per forward from the file's RoPE (``posenc.rope_from_gguf``) and the options a caller
gives ``Model.logits`` / ``Model.trace``:

- ``scheme``: None -- the file's own RoPE; a rotary scheme of ``posenc.SCHEMES`` (plain RoPE, PI, NTK-aware, dynamic
  NTK, YaRN, Llama 3, LongRoPE, p-RoPE, xPos, randomized positions) at ``params`` (its ParamSpecs' defaults, with the
  file's base and trained length where the scheme takes them); a scheme that adds nothing but the causal mask (NoPE):
  no rotation at all.
- ``fraction``: p-RoPE (Barbero et al. 2024, arXiv:2410.06205) on top of any of them: only the fastest ``fraction``
  of the pairs rotate (floor(fraction * h), as the registry's p-RoPE), the slowest stay fixed.
- ``shift``: every position moved by Delta (0 <= Delta <= MAX_SHIFT): RoPE's scores depend on offsets only, so in exact
  arithmetic nothing changes.
- ``precision``: where the rotation table (position, theta, angle, cos and sin) is rounded -- "float64" (exact), or one
  of the Precision page's modes (``posenc.analysis.precision.MODES``: "float32" is transformers' path).  The rotation
  is then applied in float32 (float64 for "float64").
- ``layout``: which channels form a pair; None -- the file's own (a llama GGUF: interleaved).  The other layout runs
  but is wrong: the classic conversion bug, on purpose.

A pure rotation (every scheme built by ``rotary.rope_scheme``, which declares itself isometric) is applied from its
``frequencies`` with the table above; xPos and randomized positions (not pure rotations) through their ``qk`` in float64.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from posenc._validate import check_choice, check_float, check_int
from posenc.analysis.precision import MODES, rope_cos_sin
from posenc.registry import SCHEMES, get_scheme
from posenc.schemes.rotary import LAYOUTS, pair_views

PRECISIONS = ("float64", *MODES)
MAX_SHIFT = 10**7


def _keyed(params) -> dict:
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    try:
        return dict(params)  # ((name, value), ...): the scalar form a cache key can hold
    except (TypeError, ValueError) as exc:
        raise ValueError(f"params must be a mapping or (name, value) pairs, got {params!r:.80}") from exc


@dataclass(frozen=True)
class Rotation:
    """What rotates q and k in every layer of one forward (built by ``rotation``)."""

    cos: np.ndarray | None  # (n, h) float32 or float64; None: no rotation (or a qk scheme)
    sin: np.ndarray | None
    layout: str
    rotary_dim: int
    qk: object = None  # a callable (q, k) -> (q', k') for a scheme that is not a pure rotation
    inv_freq: np.ndarray | None = None  # (h,) the frequencies used (fraction applied), for the record
    attention_factor: float = 1.0
    label: str = ""

    @property
    def rotates(self) -> bool:
        return self.cos is not None or self.qk is not None

    def __call__(self, q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q', k') from q (H, n, d) and k (Hkv, n, d) float32."""
        if self.qk is not None:
            q2, k2 = self.qk(q, k)
            return np.asarray(q2, dtype=np.float32), np.asarray(k2, dtype=np.float32)
        if self.cos is None:
            return q, k
        return self._rotate(q), self._rotate(k)

    def _rotate(self, x: np.ndarray) -> np.ndarray:
        # pair (a, b) at position p -> (a cos - b sin, b cos + a sin), angle p * theta_k, on the first rotary_dim channels
        first, second = pair_views(self.rotary_dim, self.layout)
        c, s = self.cos, self.sin  # (n, h)
        work = x[..., : self.rotary_dim].astype(c.dtype)  # (..., n, r)
        a, b = work[..., first], work[..., second]
        out = x.copy()
        rot = np.empty_like(work)
        rot[..., first] = a * c - b * s
        rot[..., second] = b * c + a * s
        out[..., : self.rotary_dim] = rot  # back to float32
        return out


def rotation(rope, n: int, *, scheme: str | None = None, params=None, fraction: float = 1.0, shift: int = 0,
             precision: str = "float32", layout: str | None = None) -> Rotation:
    """The rotation of a forward over ``n`` tokens, from the file's RoPE description ``rope`` (``rope_from_gguf``)."""
    n = check_int("n", n, lo=1)
    fraction = check_float("fraction", fraction, lo=0.0, hi=1.0)
    shift = check_int("shift", shift, lo=0, hi=MAX_SHIFT)
    precision = check_choice("precision", precision, PRECISIONS)
    layout = rope.layout if layout is None else check_choice("layout", layout, LAYOUTS)
    positions = np.arange(n, dtype=np.float64) + shift  # (n,)
    r = int(rope.rotary_dim)
    given = _keyed(params)
    if scheme is None:
        if given:
            raise ValueError("params need a scheme: the file's own RoPE takes none")
        inv, af, label = np.asarray(rope.inv_freq, dtype=np.float64), float(rope.attention_factor), "the file's RoPE"
    else:
        s = get_scheme(check_choice("scheme", scheme, SCHEMES))
        if s.mask_only:  # positions removed: only the causal mask is left
            return Rotation(None, None, layout, r, label=s.name)
        if not s.rotates:
            raise ValueError(f"scheme must be a rotary scheme or one that adds nothing but the causal mask, got {scheme!r} ({s.kind})")
        p = s.validate_params({**s.accepted({"base": float(rope.base), "original_max_position_embeddings": int(rope.trained_length),
                                             "layout": layout}), **given})
        if "layout" in p:
            p["layout"] = layout  # the pairing is the weights' (or the layout option's), never the scheme default's
        if not s.isometric(r, **p):  # not a pure rotation (xPos, randomized positions): its own qk, in float64
            if precision != "float64" or fraction != 1.0:
                raise ValueError(f"precision and fraction apply to rotations only; {s.name} runs in float64 at fraction 1 "
                                 f"(got precision {precision!r}, fraction {fraction:g})")

            def qk(q, k, s=s, p=p):
                q2, k2 = s.qk(q[..., :r], k[..., :r], positions, seq_len=int(positions[-1]) + 1, **p)
                out_q, out_k = q.copy(), k.copy()
                out_q[..., :r], out_k[..., :r] = q2, k2
                return out_q, out_k

            return Rotation(None, None, layout, r, qk=qk, label=s.name)
        inv, af = s.frequencies(r, seq_len=int(positions[-1]) + 1, **p)
        inv, af, label = np.asarray(inv, dtype=np.float64), float(af), s.name
    h = inv.size
    keep = int(np.floor(fraction * h + 1e-9))
    if keep < h:  # p-RoPE: the slowest h - keep pairs do not rotate
        inv = inv.copy()
        inv[np.argsort(-inv, kind="stable")[keep:]] = 0.0
    if precision == "float64":
        ang = np.multiply.outer(positions, inv)  # (n, h)
        cos, sin = np.cos(ang) * af, np.sin(ang) * af
    else:
        c, s_ = rope_cos_sin(positions, inv, precision)  # (n, h) rounded as the mode does, as float64
        cos, sin = (c * af).astype(np.float32), (s_ * af).astype(np.float32)
    return Rotation(cos, sin, layout, r, inv_freq=inv, attention_factor=af, label=label)
