"""Data for the precision page: RoPE computed in float32, float16 and bfloat16 against float64.

Every number comes from ``posenc.analysis.precision``; the frequencies from plain RoPE at the
page's head size and base, or from a pasted model (``rope_from_config`` at its served length).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_float
from posenc.analysis.precision import MAX_POSITION, MODES, cos_error_profile, first_error_above, first_identical_position, score_error
from posenc.io.ropeconfig import rope_from_config
from posenc.schemes.scaling import check_head_dim, default_inv_freq

FLOOR = 1e-12  # an error of exactly 0 is drawn at this value on the log axis


class PrecisionView(TypedDict):
    label: str
    cos: pd.DataFrame
    score: pd.DataFrame
    table: pd.DataFrame
    at_128k: dict
    notes: tuple


def precision_view(d: int = 128, base: float = 500000.0, config_text: str = "", tol: float = 1e-3) -> PrecisionView:
    """{"label": what was computed, "cos": DataFrame(mode, position, error) -- worst |cos|/|sin| error over
    every pair and 64 positions from each of 120 log-spaced starts to 10^6, "score": DataFrame(mode,
    distance, error) -- max |Δscore| / (|q||k|) over 32 seeded q, k, "table": DataFrame(mode,
    first_identical, first_above) with None where it does not happen up to 10^6, "at_128k": {mode: cos
    error near position 131,072}, "notes"}."""
    tol = check_float("tolerance", tol, lo=1e-9, hi=1.0)
    if config_text:
        r = rope_from_config(config_text)
        inv, label, notes = r.inv_freq, f"{r.name} (d {r.rotary_dim}, base {r.base:g}, {r.rope_type}, at length {r.seq_len:,})", r.notes
    else:
        d = check_head_dim(d)
        inv, label, notes = default_inv_freq(d, base), f"RoPE, d {d}, base {base:g}", ()
    inv = inv[inv > 0]  # proportional RoPE's unrotated pairs have no angle to round
    dist = np.unique(np.round(np.geomspace(1, MAX_POSITION, 48)))
    cos, score, rows, at = [], [], [], {}
    for mode in MODES:
        prof = cos_error_profile(inv, mode)
        cos.append(pd.DataFrame({"mode": mode, "position": prof["position"], "error": np.maximum(prof["error"], FLOOR)}))
        at[mode] = float(prof["error"][np.searchsorted(prof["position"], 131072)])
        se = score_error(inv, mode, dist)
        score.append(pd.DataFrame({"mode": mode, "distance": dist.astype(np.int64), "error": np.clip(se, FLOOR, 2.0)}))
        rows.append({"mode": mode, "first_identical": first_identical_position(inv, mode), "first_above": first_error_above(inv, mode, tol=tol)})
    return {"label": label, "cos": pd.concat(cos, ignore_index=True), "score": pd.concat(score, ignore_index=True),
            "table": pd.DataFrame(rows), "at_128k": at, "notes": tuple(notes)}
