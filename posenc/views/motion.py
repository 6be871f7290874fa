"""Data for the figures that move: the clock hand of sin(t), the point turning on the circle, the
rows of the sinusoid heatmap sweeping down, a RoPE pair rotating.

axes: f frames (fractional positions), n integer positions, r rows and c columns of a heatmap.

Every number a moving figure draws is computed here by posenc and sent once; the browser only
steps through the frames (``posenc.ui.motion`` plays them), so scrubbing and playing never ask
the server for anything.  Each function returns a plain dict of lists (JSON-ready), rounded to
what a drawing needs (4 decimals of a unit-circle coordinate are 1/10,000 of its radius).
"""

from __future__ import annotations

import math

import numpy as np

from posenc._validate import check_choice, check_float, check_int
from posenc.schemes.kinds import probe_vector
from posenc.schemes.naive import unit_circle_points
from posenc.schemes.rotary import LAYOUTS, apply_rope
from posenc.schemes.scaling import check_head_dim, default_inv_freq

STEPS_PER_POSITION = 8  # frames between two integer positions
MAX_FRAMES = 4097
MAX_SWEEP_VALUES = 16_384  # values of the heatmap sweep sent to the browser (~107 kB of JSON)
DIGITS = 4
SPIN_FRAMES = 240  # a RoPE pair turns once in this many frames


def _r(a) -> list:
    return np.round(np.asarray(a, dtype=np.float64), DIGITS).tolist()


def _frames(n: int) -> np.ndarray:
    """Fractional positions 0 .. n-1, STEPS_PER_POSITION per step (fewer if that passes MAX_FRAMES)."""
    per = max(1, min(STEPS_PER_POSITION, (MAX_FRAMES - 1) // max(n - 1, 1)))
    return np.arange((n - 1) * per + 1) / per  # (f,)


def clock(omega: float, n: int) -> dict:
    """sin(omega t) as the hand of a clock: the hand's tip (cos, sin) at every frame, and the
    integer positions the reading is taken at.

    Returns {"kind": "clock", "t": (f,), "x": cos(omega t), "y": sin(omega t), "positions": (n,)
    integer t, "values": sin(omega t) at them, "omega", "period": 2 pi / omega}.
    """
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    n = check_int("n", n, lo=2, hi=1024)
    t = _frames(n)
    pts = unit_circle_points(t, omega=w)  # (f, 2): sin, cos
    ints = unit_circle_points(np.arange(n), omega=w)  # (n, 2)
    return {"kind": "clock", "t": _r(t), "x": _r(pts[:, 1]), "y": _r(pts[:, 0]),
            "positions": list(range(n)), "values": _r(ints[:, 0]), "omega": w, "period": 2 * math.pi / w}


def circle(omega: float, n: int) -> dict:
    """The point [sin wt, cos wt] turning on the unit circle, leaving a dot at each integer
    position it passes, coloured by turn.

    Returns {"kind": "circle", "t", "x" = cos, "y" = sin (per frame), "px", "py" (per integer
    position), "turn": the turn each integer position is on, "turn_at": (f,) turns made at each
    frame (omega t / 2 pi), "omega", "turns": total turns}.
    """
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    n = check_int("n", n, lo=2, hi=4096)
    t = _frames(n)
    pts = unit_circle_points(t, omega=w)  # (f, 2)
    ints = unit_circle_points(np.arange(n), omega=w)  # (n, 2)
    turn = np.floor(w * np.arange(n) / (2 * math.pi)).astype(int)
    return {"kind": "circle", "t": _r(t), "x": _r(pts[:, 1]), "y": _r(pts[:, 0]), "px": _r(ints[:, 1]),
            "py": _r(ints[:, 0]), "turn": turn.tolist(), "turn_at": np.round(w * t / (2 * math.pi), 2).tolist(),
            "omega": w, "turns": float(w * (n - 1) / (2 * math.pi))}


def sweep(shown: np.ndarray, rows: np.ndarray, cols: np.ndarray, max_values: int = MAX_SWEEP_VALUES) -> dict:
    """The heatmap's rows, one per frame: the drawn matrix (r, c) and its labels.

    At most ``max_values`` values go to the browser (every k-th row beyond that: the figure is sent whole at every
    change of its page's controls, ~6.5 bytes a value).  Returns {"kind": "sweep", "values": (r', c) nested lists
    (3 decimals), "rows": position of each row kept, "cols": depth of each column}.
    """
    M = np.asarray(shown, dtype=np.float64)
    if M.ndim != 2 or M.shape != (len(rows), len(cols)):
        raise ValueError(f"shown must be (rows, cols) = ({len(rows)}, {len(cols)}), got {M.shape}")
    cap = check_int("max_values", max_values, lo=1, hi=1 << 20)
    keep = slice(None, None, max(1, math.ceil(M.size / cap)))
    return {"kind": "sweep", "values": np.round(M[keep], 3).tolist(), "rows": np.asarray(rows)[keep].tolist(),
            "cols": np.asarray(cols).tolist()}


def rope_spin(head_dim: int, base: float, layout: str, probe: str, seed: int, pair: int, m: int, n: int) -> dict:
    """A query at m + s and a key at n + s, for s running over one turn of pair ``pair``: both
    arrows of the pair turn, the angle between them and the full score stay put.

    Probes as on the RoPE page: "random" -> seeded normal q (seed) and k (seed + 1); "ones".
    Returns {"kind": "spin", "s": (f,) shifts, "qx", "qy", "kx", "ky": the pair's two channels of
    R_(m+s) q and R_(n+s) k, "score": (f,) the full d-dimensional score, "m", "n", "radius"}.
    """
    d = check_head_dim(head_dim, lo=4)
    layout = check_choice("layout", layout, LAYOUTS)
    i = check_int("pair", pair, lo=0, hi=d // 2 - 1)
    m = check_int("m", m, lo=0, hi=10**9)
    n = check_int("n", n, lo=0, hi=10**9)
    check_choice("probe", probe, ("random", "ones"))
    seed = check_int("seed", seed, lo=0, hi=10**6)
    check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    q, k = probe_vector(d, probe, seed=seed), probe_vector(d, probe, seed=seed + 1)  # (d,) each
    inv = default_inv_freq(d, base)  # (h,)
    s = np.linspace(0.0, 2 * math.pi / inv[i], SPIN_FRAMES + 1)  # (f,) one full turn of the pair
    Q = apply_rope(np.broadcast_to(q, (s.size, d)), m + s, inv, layout=layout)  # (f, d)
    K = apply_rope(np.broadcast_to(k, (s.size, d)), n + s, inv, layout=layout)  # (f, d)
    a, b = (i, i + d // 2) if layout == "half_split" else (2 * i, 2 * i + 1)
    score = np.einsum("fd,fd->f", Q, K)  # (f,)
    radius = float(max(np.hypot(Q[:, a], Q[:, b]).max(), np.hypot(K[:, a], K[:, b]).max(), 1e-12))
    return {"kind": "spin", "s": _r(s), "qx": _r(Q[:, a]), "qy": _r(Q[:, b]), "kx": _r(K[:, a]), "ky": _r(K[:, b]),
            "score": np.round(score, 6).tolist(), "m": m, "n": n, "radius": radius, "pair": i}
